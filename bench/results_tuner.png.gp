set terminal png size 1280,840
set output '/work/main/bench/results_tuner.png'
set multiplot layout 2,2
set key bottom right
set grid
set xlabel 'trials'
set ylabel 'best GFLOPS'
set title 'dense 16,1024,1024 (mean of 3 seeds)'
plot '/work/main/bench/results_tuner.png.panel0.dat' using 1:2 with lines lw 2 title 'random', '/work/main/bench/results_tuner.png.panel0.dat' using 1:3 with lines lw 2 title 'ga', '/work/main/bench/results_tuner.png.panel0.dat' using 1:4 with lines lw 2 title 'xgb', 64.2296 with lines dt 2 lc rgb 'gray' title '95% of best random'
set title 'dense 1,1000,512 (mean of 3 seeds)'
plot '/work/main/bench/results_tuner.png.panel1.dat' using 1:2 with lines lw 2 title 'random', '/work/main/bench/results_tuner.png.panel1.dat' using 1:3 with lines lw 2 title 'ga', '/work/main/bench/results_tuner.png.panel1.dat' using 1:4 with lines lw 2 title 'xgb', 7.42471 with lines dt 2 lc rgb 'gray' title '95% of best random'
set title 'transfer to dense 512,512,512 (mean of 3 seeds)'
plot '/work/main/bench/results_tuner.png.panel2.dat' using 1:2 with lines lw 2 title 'xgb cold', '/work/main/bench/results_tuner.png.panel2.dat' using 1:3 with lines lw 2 title 'xgb + history of other shapes', 250.522 with lines dt 2 lc rgb 'gray' title '95% of best random'
unset multiplot
